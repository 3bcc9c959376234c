//! [`HttpConfig`]: how the endpoint authenticates, which hosts and browser origins it
//! accepts, its edge limits and its rate limit.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::paths::METADATA_PATH;
use crate::auth::{Authenticator, TokenConfig};
use crate::mcp::edge::{EdgeLimits, ServeOptions};
use crate::mcp::origin::{authority_of, normalise, origin_of};
use crate::mcp::rate::RateLimit;

/// How the HTTP endpoint authenticates, which hosts and browser origins it accepts, and
/// its edge limits.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    pub(super) authenticator: Authenticator,
    pub(super) allowed_hosts: Vec<String>,
    pub(super) allowed_origins: Vec<String>,
    pub(super) authorization_servers: Vec<String>,
    pub(super) legacy_sessions: bool,
    pub(super) list_ttl: Duration,
    pub(super) task_ttl: Duration,
    /// The tasks this replica runs: swept for stopped replicas' tasks, drained on shutdown.
    pub(super) tasks: crate::mcp::tasks::TaskBoard,
    pub(super) apps: crate::mcp::apps::McpApps,
    pub(super) cancellation: CancellationToken,
    pub(super) limits: EdgeLimits,
    pub(super) rate_limit: Option<RateLimit>,
    pub(super) shutdown_grace: Duration,
    pub(super) drain: CancellationToken,
    /// The sealer of questions' `requestState`s; `None`: a random key of the process.
    pub(super) request_states: Option<std::sync::Arc<crate::mcp::input::StateKeeper>>,
    /// A start-up reconcile of remote drafts running beside the server, for `/readyz`.
    pub(super) reconciliation: Option<crate::remote::Reconciliation>,
}
impl HttpConfig {
    /// Accepts HS256 tokens checked by `tokens` (see [`from_authenticator`](Self::from_authenticator)
    /// for an identity provider).
    pub fn new(tokens: TokenConfig) -> Self {
        Self::from_authenticator(Authenticator::shared_secret(tokens))
    }

    /// Accepts the tokens `authenticator` accepts. Allowed hosts: `localhost`,
    /// `127.0.0.1`, `::1` and the host of the resource URL. Allowed cross-origin pages:
    /// none (same-origin requests and requests without `Origin` are accepted). Edge
    /// limits and the rate limit: their defaults.
    pub fn from_authenticator(authenticator: Authenticator) -> Self {
        let mut allowed_hosts: Vec<String> =
            vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if let Some(authority) = authority_of(authenticator.resource_url()) {
            allowed_hosts.push(authority);
        }
        HttpConfig {
            authenticator,
            allowed_hosts,
            allowed_origins: Vec::new(),
            authorization_servers: Vec::new(),
            legacy_sessions: true,
            list_ttl: Duration::ZERO,
            task_ttl: crate::mcp::tasks::DEFAULT_TASK_TTL,
            tasks: Default::default(),
            apps: Default::default(),
            cancellation: CancellationToken::new(),
            limits: EdgeLimits::default(),
            rate_limit: Some(RateLimit::default()),
            shutdown_grace: Duration::from_secs(30),
            drain: CancellationToken::new(),
            request_states: None,
            reconciliation: None,
        }
    }

    /// Reports `reconciliation` (the start-up reconcile of remote drafts running beside
    /// the server, [`remote::reconcile_in_background`](crate::remote::reconcile_in_background))
    /// on `/readyz`: `"remote_drafts": "reconciling remote drafts: 12 pending key(s) left,
    /// ..."` until it ends, then what it did. The server is ready meanwhile (`200`): calls
    /// are exactly-once while it runs.
    pub fn with_reconciliation(mut self, reconciliation: crate::remote::Reconciliation) -> Self {
        self.reconciliation = Some(reconciliation);
        self
    }

    /// Replaces the accepted `Host` values (hostnames, or `host:port`), which protect a
    /// locally running server against DNS rebinding. A public deployment lists its own
    /// hostnames here.
    pub fn with_allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = strings(hosts);
        self
    }

    /// Browser origins allowed to call the endpoint cross-origin, exactly as browsers
    /// send them (`https://app.example.com`, `http://localhost:5173`).
    pub fn with_allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = strings(origins).iter().map(|o| normalise(o)).collect();
        self
    }

    /// Authorization servers announced in the protected-resource metadata, in addition
    /// to the authenticator's issuer.
    pub fn with_authorization_servers<I, S>(mut self, servers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.authorization_servers = strings(servers);
        self
    }

    /// Whether clients on protocol revisions up to 2025-11-25 get a session
    /// (`Mcp-Session-Id`); default true. Revision 2026-07-28 is always stateless.
    pub fn with_legacy_sessions(mut self, enabled: bool) -> Self {
        self.legacy_sessions = enabled;
        self
    }

    /// `ttlMs` of `tools/list` results (see
    /// [`ErpMcpServer::with_list_ttl`](crate::mcp::ErpMcpServer::with_list_ttl)).
    pub fn with_list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// How often this replica looks for tasks of stopped replicas to take over (default
    /// 5 s). A task of a killed replica is taken over within its lease
    /// ([`DatabaseOptions::replica_lease`](crate::DatabaseOptions::replica_lease)) plus
    /// this; one released by a draining replica within this, or at its next `tasks/get`.
    pub fn with_task_sweep(self, every: Duration) -> Self {
        self.tasks.set_sweep_every(every);
        self
    }

    /// How long a task is kept (see
    /// [`ErpMcpServer::with_task_ttl`](crate::mcp::ErpMcpServer::with_task_ttl)).
    pub fn with_task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// Seals questions' `requestState`s with `key` (32 bytes or more, from your secret
    /// store), valid for `ttl` (see
    /// [`ErpMcpServer::with_request_state_key`](crate::mcp::ErpMcpServer::with_request_state_key)).
    /// Behind a load balancer every replica needs the same key: a repeated call answering
    /// a question may reach any of them. Without it each process seals with a random key
    /// of its own, and only that process accepts its states.
    ///
    /// ```
    /// use std::time::Duration;
    /// use erp_tools_core::auth::TokenConfig;
    /// use erp_tools_core::mcp::HttpConfig;
    ///
    /// let config = HttpConfig::new(TokenConfig::development());
    /// assert!(config.clone().with_request_state_key(b"too short", Duration::from_secs(600)).is_err());
    /// let config = config
    ///     .with_request_state_key([7u8; 32], Duration::from_secs(600))
    ///     .expect("32 bytes is a valid key");
    /// # let _ = config;
    /// ```
    pub fn with_request_state_key(
        mut self,
        key: impl AsRef<[u8]>,
        ttl: Duration,
    ) -> Result<Self, rmcp::model::RequestStateError> {
        let keeper = crate::mcp::input::StateKeeper::new(key.as_ref(), ttl)?;
        self.request_states = Some(std::sync::Arc::new(keeper));
        Ok(self)
    }

    /// MCP Apps cards for hosts that declare the extension (see
    /// [`ErpMcpServer::with_apps`](crate::mcp::ErpMcpServer::with_apps)).
    pub fn with_apps(mut self, apps: crate::mcp::apps::McpApps) -> Self {
        self.apps = apps;
        self
    }

    /// Cancelling this token closes every MCP session and stream
    /// ([`serve_http`](super::serve_http) does so on shutdown).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// Replaces the edge limits (timeouts, body size, connection cap).
    pub fn with_edge_limits(mut self, limits: EdgeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How long a drain (SIGTERM, SIGINT, or [`ServeOptions::drain`]) waits for the calls
    /// in flight before the MCP sessions are closed (default 30 s).
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Replaces the per-principal rate limit on `tools/call`; `None` turns it off.
    pub fn with_rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }

    /// The authenticator that checks every request's token.
    pub fn authenticator(&self) -> &Authenticator {
        &self.authenticator
    }

    /// The cancellation token of the MCP sessions.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// What [`serve_http`](super::serve_http) and [`serve_listener`](super::serve_listener)
    /// need from this configuration: the edge limits, the cancellation, and whether the
    /// development key is in use.
    pub fn serve_options(&self) -> ServeOptions {
        ServeOptions {
            limits: self.limits,
            cancellation: self.cancellation.clone(),
            drain: self.drain.clone(),
            grace: self.shutdown_grace,
            tasks: self.tasks.clone(),
            development: self.authenticator.is_development(),
            default_audience: self.authenticator.is_development()
                && self.authenticator.resource_url() == crate::auth::DEV_AUDIENCE,
        }
    }

    /// The URL of the protected-resource metadata, for `WWW-Authenticate` challenges.
    pub fn metadata_url(&self) -> String {
        match origin_of(self.authenticator.resource_url()) {
            Some(origin) => format!("{origin}{METADATA_PATH}"),
            None => METADATA_PATH.to_string(),
        }
    }
}

impl From<&HttpConfig> for ServeOptions {
    fn from(config: &HttpConfig) -> Self {
        config.serve_options()
    }
}

fn strings<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items.into_iter().map(Into::into).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_metadata_url_and_hosts_from_the_resource() {
        let tokens = TokenConfig::development().for_resource("https://erp.example.com:8443/mcp");
        let config = HttpConfig::new(tokens);
        assert!(config.serve_options().development);
        assert_eq!(
            config.metadata_url(),
            "https://erp.example.com:8443/.well-known/oauth-protected-resource"
        );
        assert!(
            config
                .allowed_hosts
                .contains(&"erp.example.com:8443".to_string())
        );
    }
}
